package faults

// Names the external tests of the package read.
var (
	ErrPartitioned       = errPartitioned
	DefaultLeaseDuration = defaultLeaseDuration
)
