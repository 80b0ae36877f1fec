package shard

// Alive exposes alive to the tests of package shard_test.
var Alive = alive
