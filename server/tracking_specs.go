package server

// What COMMAND INFO and COMMAND DOCS say of the tracking and Pub/Sub
// commands: Redis 7.0.15's values.

var trackingSpecs = map[string]*commandSpec{
	"client|tracking": {
		summary:    "Enable or disable server assisted client side caching support",
		since:      "6.0.0",
		group:      "connection",
		complexity: "O(1). Some options may introduce additional complexity.",
		flags:      "noscript loading stale",
		acl:        "@slow @connection",
	},
	"client|caching": {
		summary:    "Instruct the server about tracking or not keys in the next request",
		since:      "6.0.0",
		group:      "connection",
		complexity: "O(1)",
		flags:      "noscript loading stale",
		acl:        "@slow @connection",
	},
	"client|getredir": {
		summary:    "Get tracking notifications redirection client ID if any",
		since:      "6.0.0",
		group:      "connection",
		complexity: "O(1)",
		flags:      "noscript loading stale",
		acl:        "@slow @connection",
	},
	"client|trackinginfo": {
		summary:    "Return information about server assisted client side caching for the current connection",
		since:      "6.2.0",
		group:      "connection",
		complexity: "O(1)",
		flags:      "noscript loading stale",
		acl:        "@slow @connection",
	},
	"subscribe": {
		summary:    "Listen for messages published to the given channels",
		since:      "2.0.0",
		group:      "pubsub",
		complexity: "O(N) where N is the number of channels to subscribe to.",
		flags:      "pubsub noscript loading stale",
		acl:        "@pubsub @slow",
	},
	"unsubscribe": {
		summary:    "Stop listening for messages posted to the given channels",
		since:      "2.0.0",
		group:      "pubsub",
		complexity: "O(N) where N is the number of clients already subscribed to a channel.",
		flags:      "pubsub noscript loading stale",
		acl:        "@pubsub @slow",
	},
}

var trackingDocs = map[string]docSpec{
	"client|tracking": {
		args: [][]docNode{
			{{key: "name", str: "status"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "on"}, {key: "type", str: "pure-token"}, {key: "token", str: "ON"}},
				{{key: "name", str: "off"}, {key: "type", str: "pure-token"}, {key: "token", str: "OFF"}},
			}}},
			{{key: "name", str: "client-id"}, {key: "type", str: "integer"}, {key: "token", str: "REDIRECT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "prefix"}, {key: "type", str: "string"}, {key: "token", str: "PREFIX"}, {key: "flags", flags: []string{"optional", "multiple", "multiple_token"}}},
			{{key: "name", str: "bcast"}, {key: "type", str: "pure-token"}, {key: "token", str: "BCAST"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "optin"}, {key: "type", str: "pure-token"}, {key: "token", str: "OPTIN"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "optout"}, {key: "type", str: "pure-token"}, {key: "token", str: "OPTOUT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "noloop"}, {key: "type", str: "pure-token"}, {key: "token", str: "NOLOOP"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"client|caching": {
		args: [][]docNode{
			{{key: "name", str: "mode"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "yes"}, {key: "type", str: "pure-token"}, {key: "token", str: "YES"}},
				{{key: "name", str: "no"}, {key: "type", str: "pure-token"}, {key: "token", str: "NO"}},
			}}},
		},
	},
	"subscribe": {
		args: [][]docNode{
			{{key: "name", str: "channel"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
		},
	},
	"unsubscribe": {
		args: [][]docNode{
			{{key: "name", str: "channel"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional", "multiple"}}},
		},
	},
}
