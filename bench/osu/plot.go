package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot size: 7 x 4.5 inches, 672 x 432 pixels in PNG at gonum's 96 dpi.
const (
	plotWidth  = 7 * vg.Inch
	plotHeight = 4.5 * vg.Inch
)

// checkMetrics returns the metric shared by all series: series whose metric
// is unknown go with any. Mixing latency and bandwidth on one axis is an error
// naming the odd series.
func checkMetrics(series []Series) (Metric, error) {
	m, from := MetricUnknown, ""
	for _, s := range series {
		switch {
		case s.Metric == MetricUnknown:
		case m == MetricUnknown:
			m, from = s.Metric, s.Label
		case s.Metric != m:
			return m, fmt.Errorf("series %q holds %v but %q holds %v; one plot shows one metric", s.Label, s.Metric, from, m)
		}
	}
	return m, nil
}

// writePlot draws every series (value against message size, both axes
// logarithmic) into w as format "svg" or "png". Points with a size or value
// of 0 cannot sit on a log axis and are left out (lat's 0-byte row); it is an
// error if no point is left.
func writePlot(w io.Writer, format, title string, series []Series) error {
	metric, err := checkMetrics(series)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "Message size (bytes)"
	p.Y.Label.Text = metric.String()
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	// Latency and bandwidth both rise with size: the top left corner is free.
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())

	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	drawn := 0
	for i, s := range series {
		xys := positivePoints(s.Points)
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("series %q: %w", s.Label, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
		for _, xy := range xys {
			xmin, xmax = math.Min(xmin, xy.X), math.Max(xmax, xy.X)
			ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
		}
		drawn++
	}
	if drawn == 0 {
		return errors.New("nothing to plot: no point with a size and a value above 0")
	}
	// A log axis cannot widen a one-value range around 0 as a linear one
	// does; widen by factors instead. The y range gets a margin so that no
	// point sits on the frame.
	p.X.Min, p.X.Max = widen(xmin, xmax, 1)
	p.Y.Min, p.Y.Max = widen(ymin, ymax, 1.25)

	wt, err := p.WriterTo(plotWidth, plotHeight, format)
	if err != nil {
		return fmt.Errorf("plot as %q: %w", format, err)
	}
	_, err = wt.WriteTo(w)
	return err
}

// savePlot writes the plot to path, in the format its extension names.
func savePlot(path, title string, series []Series) (err error) {
	format, err := plotFormat(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--plot: %w", cerr)
		}
	}()
	if err := writePlot(f, format, title, series); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return nil
}

// positivePoints returns the points that fit on log axes, sorted by size.
func positivePoints(pts []Point) plotter.XYs {
	var xys plotter.XYs
	for _, pt := range pts {
		if pt.Size > 0 && pt.Value > 0 {
			xys = append(xys, plotter.XY{X: float64(pt.Size), Y: pt.Value})
		}
	}
	sort.SliceStable(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
	return xys
}

// widen returns [lo/margin, hi*margin], or [lo/2, hi*2] when the range is a
// single value.
func widen(lo, hi, margin float64) (float64, float64) {
	if lo == hi {
		margin = 2
	}
	return lo / margin, hi * margin
}

// sizeTicks marks the message-size axis at powers of two, labelled in
// bytes with k/m/g suffixes ("64k"), at most about a dozen labels.
type sizeTicks struct{}

// Ticks implements plot.Ticker.
func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi < lo {
		return nil
	}
	first := int(math.Ceil(math.Log2(lo) - 1e-9))
	last := int(math.Floor(math.Log2(hi) + 1e-9))
	step := (last-first)/12 + 1
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Exp2(float64(e))}
		if (e-first)%step == 0 && e >= 0 && e < 62 {
			t.Label = formatSize(1 << e)
		}
		ticks = append(ticks, t)
	}
	return ticks
}
