module github.com/rvplay/rvplay/test/kubectl

go 1.26
