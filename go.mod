module github.com/rvplay/rvplay

go 1.26
