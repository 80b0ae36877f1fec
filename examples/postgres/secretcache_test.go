package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// TestSecretCacheKeepsConnectionSecretsOnly runs the controllers with the
// manager's cache of Secrets limited as the operator's command limits it
// (managed.CacheConnectionSecretsOnly). A Role's connection Secret is
// labelled and its password logs in; an unrelated Secret of the namespace
// is not in the cache; a connection Secret that loses its label (as one an
// older version wrote) is labelled again with its password unchanged and
// no new password set; a deleted one comes back with a new password that
// logs in.
func TestSecretCacheKeepsConnectionSecretsOnly(t *testing.T) {
	srv := server(t)
	cp := shared.ControlPlane(t)
	logs := &bosuntest.LogRecorder{}
	mgr := bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{
		Configure: func(o *ctrl.Options) { managed.CacheConnectionSecretsOnly(&o.Cache) },
	}, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		return SetupWithManager(mgr, Options{
			DSN: srv.DSN("postgres"),
			Managed: []managed.Option{
				managed.WithTiming(managed.Timing{Poll: time.Second, MinPoll: time.Second, Short: time.Second}),
			},
		})
	})
	e := env{c: cp.Client, srv: srv, ns: bosuntest.Namespace(t, cp.Client), logs: logs}
	ctx := t.Context()

	unrelated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "unrelated"}}
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app"},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: "app-conn"},
	}
	create(t, e, unrelated, role)
	waitFor(t, e.c, client.ObjectKeyFromObject(role), role, readyTrue, syncedTrue)
	name := managed.ExternalName(role)
	first := waitLogin(t, e, "app-conn")
	if err := mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(unrelated), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unrelated Secret from the manager's cache: %v, want NotFound", err)
	}

	from := statementCount(t, e)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s := &corev1.Secret{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "app-conn"}, s); err != nil {
			return err
		}
		delete(s.Labels, managed.LabelConnectionSecret)
		return e.c.Update(ctx, s)
	})
	relabelled := waitLogin(t, e, "app-conn")
	if string(relabelled.Data[SecretPassword]) != string(first.Data[SecretPassword]) {
		t.Error("the password changed when the Secret was labelled again, want it kept")
	}
	if found := passwordStatements(t, e, from, name); len(found) != 0 {
		t.Errorf("%d statements set a password while the Secret was labelled again, want none", len(found))
	}

	if err := e.c.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s := &corev1.Secret{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(first), s); err != nil {
			return err
		}
		if s.UID == first.UID || string(s.Data[SecretPassword]) == string(first.Data[SecretPassword]) {
			return fmt.Errorf("secret %s not written again yet", s.Name)
		}
		return nil
	})
	waitLogin(t, e, "app-conn")
	deleteAndWait(t, e, role)
}

// waitLogin waits until the connection Secret name is labelled
// managed.LabelConnectionSecret and its password logs in, and returns it.
func waitLogin(t *testing.T, e env, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, s); err != nil {
			return err
		}
		if _, ok := s.Labels[managed.LabelConnectionSecret]; !ok {
			return fmt.Errorf("secret %s has labels %v, want %s", name, s.Labels, managed.LabelConnectionSecret)
		}
		return login(ctx, e, s)
	}, bosuntest.Timeout(time.Minute))
	return s
}
