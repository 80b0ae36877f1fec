package rwexternal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrKeyCollision is wrapped by the error Derive returns when two input keys
// differ only in case.
var ErrKeyCollision = errors.New("input keys collide")

// Derive returns the data of the output Secret for the data of an input
// Secret: for every input key, the key in upper case holds the hexadecimal
// SHA-256 digest of the value. The output thus tells whether a value changed
// without revealing it. Two input keys that differ only in case would give
// the same output key; Derive then returns an error wrapping ErrKeyCollision
// that names the first such pair in key order.
func Derive(input map[string][]byte) (map[string][]byte, error) {
	out := make(map[string][]byte, len(input))
	from := make(map[string]string, len(input))
	for _, k := range slices.Sorted(maps.Keys(input)) {
		upper := strings.ToUpper(k)
		if prev, dup := from[upper]; dup {
			return nil, fmt.Errorf("%w: %q and %q both become %q", ErrKeyCollision, prev, k, upper)
		}
		from[upper] = k
		sum := sha256.Sum256(input[k])
		out[upper] = []byte(hex.EncodeToString(sum[:]))
	}
	return out, nil
}
