package launcher

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// catchSignals turns SIGHUP, SIGINT and SIGTERM (a dying agent, or someone
// on the host) into a clean teardown instead of a sudden death, and a
// broken stdout into write errors.
func catchSignals(c chan os.Signal) {
	signal.Notify(c, unix.SIGHUP, unix.SIGINT, unix.SIGPIPE, unix.SIGTERM)
}
