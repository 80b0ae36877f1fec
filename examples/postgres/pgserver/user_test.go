package pgserver

import (
	"errors"
	"strings"
	"testing"
)

func TestServerUser(t *testing.T) {
	tests := []struct {
		name    string
		euid    int
		user    string
		wantNil bool
		wantErr string
	}{
		{name: "not root", euid: 1000, user: "bosun-no-such-user", wantNil: true},
		{name: "root without the user", euid: 0, user: "bosun-no-such-user", wantErr: "apt-get install -y postgresql"},
		{name: "root as root", euid: 0, user: "root", wantErr: `user "root" is root too`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serverUser(tt.euid, tt.user)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrNoServerUser) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("serverUser() error = %v, want ErrNoServerUser mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("serverUser() error = %v", err)
			}
			if (got == nil) != tt.wantNil {
				t.Errorf("serverUser() = %+v, want nil: %v", got, tt.wantNil)
			}
		})
	}
}
