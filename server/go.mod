module github.com/xstreamgo/xstream/server

go 1.25

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/redis/go-redis/v9 v9.17.3
	github.com/tidwall/redcon v1.6.4
	github.com/xstreamgo/xstream v0.1.0
)

require (
	github.com/armon/go-radix v1.0.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/tidwall/btree v1.1.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
)
