package oracle

// Names the external tests of the package read.
const (
	ConflictMessage = conflictMessage
	MinSecretLength = minSecretLength
)

// The errors the oracles wrap, for the tests to tell apart.
var (
	ErrConflictLogged = errConflictLogged
	ErrNotConverged   = errNotConverged
	ErrNotGone        = errNotGone
	ErrOrphans        = errOrphans
	ErrNotQuiet       = errNotQuiet
	ErrSecretFound    = errSecretFound
	ErrShortSecret    = errShortSecret
	ErrNoSecrets      = errNoSecrets
	ErrDuplicates     = errDuplicates
	ErrMissing        = errMissing
	ErrExtra          = errExtra
	ErrLeaked         = errLeaked
)
