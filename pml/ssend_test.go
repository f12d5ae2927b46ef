package pml

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// MPI_Ssend, blocking: it does not return before the receive matched,
// eager sizes included (a blocking send that completed when the payload was
// copied would return at once).
func TestBlockingSsendWaitsForMatch(t *testing.T) {
	for _, n := range []int{0, 10, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
				if c.Rank() == 0 {
					var returned atomic.Bool
					done := make(chan error, 1)
					go func() {
						err := c.Send(pattern(n, 0), 1, 1, true)
						returned.Store(true)
						done <- err
					}()
					time.Sleep(50 * time.Millisecond) // a wrong Ssend returns meanwhile
					if returned.Load() {
						t.Errorf("blocking Ssend of %d bytes returned before the receive was posted", n)
					}
					if err := c.Send(nil, 1, 2, false); err != nil { // tell rank 1 to post
						t.Error(err)
					}
					if err := <-done; err != nil {
						t.Error(err)
					}
					return
				}
				if _, err := c.Recv(nil, 0, 2); err != nil {
					t.Error(err)
				}
				buf := make([]byte, n)
				if st, err := c.Recv(buf, 0, 1); err != nil || st.Count != n {
					t.Errorf("%+v %v", st, err)
				}
			})
		})
	}
}
