package bosuntest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tickAnnotation is the annotation Window changes on its clock object to
// bring the clock's next pass.
const tickAnnotation = "bosuntest.bosun.dev/tick"

// Window returns once at least d has gone by and the object clock has had
// at least n passes since the call, as passes counts them (for example a
// ReconcileCounter's Count of the clock's key). It is the time a test
// gives something to happen that must not: measured in the controller's
// passes as well as in time, it grows on a busy machine, where passes come
// slower, instead of ending before the controller has done anything.
//
// clock is an object of the controller's kind with its namespace and name
// set. When c is not nil, each check that falls short sets the annotation
// "bosuntest.bosun.dev/tick" of clock to a new value through c, which brings a pass; with c nil the
// clock must bring its own passes (an object that polls). Window gives up,
// failing the test, after five minutes.
func Window(t TB, c client.Client, clock client.Object, passes func() int, d time.Duration, n int) {
	t.Helper()
	key := client.ObjectKeyFromObject(clock)
	start, base := time.Now(), passes()
	tick := 0
	Eventually(t, func(ctx context.Context) error {
		got := passes() - base
		if got >= n && time.Since(start) >= d {
			return nil
		}
		if c != nil {
			tick++
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, tickAnnotation, strconv.Itoa(tick))
			obj, ok := clock.DeepCopyObject().(client.Object)
			if !ok {
				return fmt.Errorf("bosuntest: the clock %T is not a client.Object once copied", clock)
			}
			if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				return fmt.Errorf("ticking %s: %w", key, err)
			}
		}
		return fmt.Errorf("%d passes of %s in %s, want %d and at least %s", got, key, time.Since(start).Round(time.Millisecond), n, d)
	}, Timeout(5*time.Minute), Interval(200*time.Millisecond))
}
