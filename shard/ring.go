package shard

import (
	"hash/fnv"
	"slices"
	"strconv"
)

// defaultTokens is how many points each member has on a Ring: enough that
// the members' shares stay within a few percent of each other.
const defaultTokens = 128

// Ring assigns keys to members by consistent hashing: each member holds
// tokens points on a circle of hashes, and a key belongs to the member
// holding the first point at or after the key's hash. When a member joins
// or leaves, only the keys of its points move. The zero Ring has no
// members.
type Ring struct {
	points []point
}

type point struct {
	hash   uint64
	member string
}

// NewRing returns the ring of members, each with tokens points
// (128 when tokens is not positive).
func NewRing(members []string, tokens int) Ring {
	if tokens <= 0 {
		tokens = defaultTokens
	}
	r := Ring{points: make([]point, 0, len(members)*tokens)}
	for _, m := range members {
		for i := range tokens {
			r.points = append(r.points, point{hash: hash(m + "#" + strconv.Itoa(i)), member: m})
		}
	}
	slices.SortFunc(r.points, func(a, b point) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		case a.member < b.member:
			return -1
		case a.member > b.member:
			return 1
		}
		return 0
	})
	return r
}

// Owner returns the member that key belongs to; empty when the ring has
// no members.
func (r Ring) Owner(key string) string {
	if len(r.points) == 0 {
		return ""
	}
	return r.points[r.first(key)].member
}

// first returns the index of the first point at or after the hash of
// key, around the circle; the ring has points.
func (r Ring) first(key string) int {
	h := hash(key)
	i, _ := slices.BinarySearchFunc(r.points, h, func(p point, h uint64) int {
		switch {
		case p.hash < h:
			return -1
		case p.hash > h:
			return 1
		}
		return 0
	})
	if i == len(r.points) {
		i = 0
	}
	return i
}

// ownerExcept returns the member that key would belong to if except were
// not on the ring: the member of the first point at or after the key's
// hash that is not except's. Empty when no other member is on the ring.
func (r Ring) ownerExcept(key, except string) string {
	if len(r.points) == 0 {
		return ""
	}
	i := r.first(key)
	for n := range len(r.points) {
		if p := r.points[(i+n)%len(r.points)]; p.member != except {
			return p.member
		}
	}
	return ""
}

// hash is the 64-bit FNV-1a hash of s, with its bits mixed so that keys
// that differ in their last characters land far apart.
func hash(s string) uint64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(s))
	h := f.Sum64()
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
