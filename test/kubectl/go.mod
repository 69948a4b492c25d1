module github.com/rvplay/rvplay/test/kubectl

go 1.26.0

require github.com/rvplay/rvplay v0.0.0

replace github.com/rvplay/rvplay => ../..
