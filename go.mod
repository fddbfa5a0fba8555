module github.com/xstreamgo/xstream

go 1.25

require github.com/armon/go-radix v1.0.0
