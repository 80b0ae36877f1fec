package pgserver

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
)

// DefaultOSUser is the operating-system user that runs initdb and postgres
// when the calling process is root. Debian's postgresql-common package
// creates it.
const DefaultOSUser = "postgres"

// ErrNoServerUser reports that the calling process is root and the
// unprivileged user that should run the server does not exist.
var ErrNoServerUser = errors.New("no unprivileged user to run postgresql as")

// runAs is the unprivileged identity the server processes run under.
type runAs struct {
	name     string
	uid, gid uint32
}

// serverUser decides who runs the server processes: nobody else when euid
// is not root, else the user called name.
func serverUser(euid int, name string) (*runAs, error) {
	if euid != 0 {
		return nil, nil
	}
	if name == "" {
		name = DefaultOSUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: this process runs as root, which postgres refuses, and user %q cannot be used instead (%v); "+
			"install the postgresql package (apt-get install -y postgresql), which creates it, "+
			"set Options.OSUser to another unprivileged user, or run as a non-root user", ErrNoServerUser, name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: user %q has uid %q, which is not a number", ErrNoServerUser, name, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: user %q has gid %q, which is not a number", ErrNoServerUser, name, u.Gid)
	}
	if uid == 0 {
		return nil, fmt.Errorf("%w: user %q is root too", ErrNoServerUser, name)
	}
	return &runAs{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}
