package tcp

import "time"

// ProgressWithin implements btl.Progressor. A peer's TCP_USER_TIMEOUT (a
// little under btl_tcp_timeout) also ends a connection whose receiver has
// kept its window shut that long, so this rank must read its sockets well
// within btl_tcp_timeout even while its program computes: a quarter of it,
// and at least once a second.
func (m *Module) ProgressWithin() time.Duration {
	return min(time.Second, m.cfg.Timeout()/4)
}
