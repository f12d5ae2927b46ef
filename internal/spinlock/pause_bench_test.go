package spinlock

import "testing"

func BenchmarkPause(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Pause()
	}
}
