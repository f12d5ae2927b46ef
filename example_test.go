package gorun_test

import (
	"errors"
	"fmt"

	"github.com/gorun-mpi/gorun"
)

// A program started without gorun is a singleton world: it can still send
// to itself. Under `gorun -np N` the same code talks to N ranks.
func Example() {
	world, err := gorun.Init()
	if err != nil {
		fmt.Println(err)
		return
	}
	me := world.Rank()
	req, _ := world.Irecv(make([]byte, 16), gorun.AnySource, gorun.AnyTag)
	if err := world.Send([]byte("hello"), me, 7); err != nil {
		fmt.Println(err)
	}
	st, err := req.Wait()
	fmt.Printf("rank %d of %d got %d bytes from rank %d with tag %d (err %v)\n", me, world.Size(), st.Count, st.Source, st.Tag, err)

	// A message longer than the buffer: the buffer keeps its prefix.
	world.Send([]byte("truncated message"), me, 8)
	buf := make([]byte, 9)
	st, err = world.Recv(buf, me, 8)
	fmt.Printf("%q %d %v\n", buf, st.Count, errors.Is(err, gorun.ErrTruncate))
	// Output:
	// rank 0 of 1 got 5 bytes from rank 0 with tag 7 (err <nil>)
	// "truncated" 9 true
}

// Collectives are generic functions over a communicator; a singleton world
// reduces over its one rank. A user's op is combined in rank order.
func ExampleAllreduce() {
	world, err := gorun.Init()
	if err != nil {
		fmt.Println(err)
		return
	}
	v := []float64{1.5, -2}
	if err := gorun.Allreduce(world, nil, v, gorun.Max[float64]); err != nil { // in place
		fmt.Println(err)
	}
	prefix := make([]int32, 2)
	gorun.Scan(world, []int32{3, 4}, prefix, func(acc, in []int32) { // a user Op
		for i := range acc {
			acc[i] = acc[i]*10 + in[i]
		}
	})
	half, _ := world.Split(world.Rank()%2, 0)
	fmt.Println(v, prefix, half.Size(), half.Free())
	// Output:
	// [1.5 -2] [3 4] 1 <nil>
}
