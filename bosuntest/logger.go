package bosuntest

import (
	"os"
	"sync"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

var globalLoggerOnce sync.Once

// setGlobalLogger gives controller-runtime's process-wide logger, which
// envtest and the controller-runtime packages log through, a sink that
// prints errors to os.Stderr. Without one, controller-runtime prints a
// warning with a stack trace once a test binary has run for 30 seconds.
// Managers started with RunManager log to the test instead.
func setGlobalLogger() {
	globalLoggerOnce.Do(func() {
		ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	})
}
