package xredis

// Slot is the hash slot of a key, for the tests.
var Slot = slot
