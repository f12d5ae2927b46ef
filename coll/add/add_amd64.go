package add

// Each adds n bytes of in to acc (n a multiple of the element size).

//go:noescape
func f32(acc, in *byte, n int)

//go:noescape
func f64(acc, in *byte, n int)

//go:noescape
func i32(acc, in *byte, n int)

//go:noescape
func i64(acc, in *byte, n int)
