module github.com/rvplay/rvplay/test/kubediff

go 1.26.0

require github.com/rvplay/rvplay v0.0.0

replace github.com/rvplay/rvplay => ../..
