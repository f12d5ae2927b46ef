package gorun

import (
	"math"
	"os"
	"testing"
	"time"
	"unsafe"
)

// MPI_Get_count: whole elements, or Undefined when the bytes do not divide.
func TestCount(t *testing.T) {
	cases := []struct {
		name  string
		count int
		f     func(Status) int
		want  int
	}{
		{"float64 0 bytes", 0, Count[float64], 0},
		{"float64 8 bytes", 8, Count[float64], 1},
		{"float64 24 bytes", 24, Count[float64], 3},
		{"float64 12 bytes", 12, Count[float64], Undefined},
		{"int32 12 bytes", 12, Count[int32], 3},
		{"int32 13 bytes", 13, Count[int32], Undefined},
		{"byte 13 bytes", 13, Count[byte], 13},
		{"complex128 32 bytes", 32, Count[complex128], 2},
		{"complex128 24 bytes", 24, Count[complex128], Undefined},
		{"int native", 5 * int(unsafe.Sizeof(int(0))), Count[int], 5},
		{"uintptr native", 2 * int(unsafe.Sizeof(uintptr(0))), Count[uintptr], 2},
		{"named type", 16, Count[celsius], 2},
		{"negative count", -8, Count[float64], Undefined},
	}
	for _, c := range cases {
		if got := c.f(Status{Count: c.count}); got != c.want {
			t.Errorf("%s: Count(Status{Count: %d}) = %d, want %d", c.name, c.count, got, c.want)
		}
	}
}

type celsius float64

// The typed calls move the elements' memory: int, uint and uintptr are
// Scalars, and the nonblocking and Sendrecv forms deliver like the byte ones.
func TestTypedSelf(t *testing.T) {
	w, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	ints := []int{-1, 0, 1, math.MaxInt, math.MinInt}
	got := make([]int, len(ints)+2)
	r, err := IrecvSlice(w, got, 0, 31)
	if err != nil {
		t.Fatal(err)
	}
	s, err := IsendSlice(w, ints, 0, 31)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	st, err := r.Wait()
	if err != nil || Count[int](st) != len(ints) || st.Count != len(ints)*int(unsafe.Sizeof(0)) {
		t.Fatalf("IrecvSlice of %d ints: %+v (Count %d) %v", len(ints), st, Count[int](st), err)
	}
	for i, v := range ints {
		if got[i] != v {
			t.Fatalf("element %d: got %d, want %d", i, got[i], v)
		}
	}

	// Sendrecv of float64 into uint32: the bytes, in native order.
	f := []float64{1.5, -2.25}
	u := make([]uint32, 4)
	st, err = SendrecvSlice(w, f, 0, 32, u, 0, 32)
	if err != nil || Count[uint32](st) != 4 || Count[float64](st) != 2 {
		t.Fatalf("SendrecvSlice: %+v %v", st, err)
	}
	back := unsafe.Slice((*float64)(unsafe.Pointer(&u[0])), 2)
	if back[0] != 1.5 || back[1] != -2.25 {
		t.Fatalf("SendrecvSlice delivered %v, want %v", back, f)
	}

	// Empty and nil slices are zero-byte messages.
	if _, err := IsendSlice[uintptr](w, nil, 0, 33); err != nil {
		t.Fatal(err)
	}
	st, err = RecvSlice(w, []uint{}, 0, 33)
	if err != nil || st.Count != 0 || Count[uint](st) != 0 {
		t.Fatalf("zero-byte typed message: %+v %v", st, err)
	}

	// Invalid arguments are the byte calls' errors; no request.
	if r, err := IsendSlice(w, ints, 1, 0); r != nil || err == nil {
		t.Fatalf("IsendSlice to rank 1 of 1: %v %v, want nil and an error", r, err)
	}
	if r, err := IrecvSlice(w, got, 0, -2); r != nil || err == nil {
		t.Fatalf("IrecvSlice with tag -2: %v %v, want nil and an error", r, err)
	}
}

func TestWtime(t *testing.T) {
	a := Wtime()
	time.Sleep(20 * time.Millisecond)
	b := Wtime()
	if a < 0 || b-a < 0.02 {
		t.Fatalf("Wtime %v then %v after a 20 ms sleep; want non-negative and at least 0.02 s apart", a, b)
	}
}

func TestProcessorName(t *testing.T) {
	h, err := os.Hostname()
	if err != nil {
		t.Skip("no hostname:", err)
	}
	if got := ProcessorName(); got != h {
		t.Fatalf("ProcessorName() = %q, want the hostname %q", got, h)
	}
}
