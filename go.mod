module github.com/xstreamgo/xstream

go 1.25

require (
	github.com/armon/go-radix v1.0.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
