module github.com/rvplay/rvplay/test/kubediff

go 1.26.0
