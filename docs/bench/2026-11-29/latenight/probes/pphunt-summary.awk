# pphunt-summary.awk pphunt.txt: over the caught blocks' rows (nway5.sh medians: size, read, adaptive, pipeline | adaptive/read pipeline/read),
# per size the range of adaptive/read where the pipeline won (pipeline/read > 1.2) and where it lost (< 0.8)
$1 ~ /^[NF]$/ && NF == 8 { s=$2; a=$7; p=$8
  if (p > 1.2) { w[s]++; if (!(s in wl) || a < wl[s]) wl[s]=a; if (!(s in wh) || a > wh[s]) wh[s]=a }
  if (p < 0.8) { l[s]++; if (!(s in ll) || a < ll[s]) ll[s]=a; if (!(s in lh) || a > lh[s]) lh[s]=a } }
END { for (s in w) printf "pipeline won  %8d: adaptive/read %.3f-%.3f (%d rows)\n", s, wl[s], wh[s], w[s]
      for (s in l) printf "pipeline lost %8d: adaptive/read %.3f-%.3f (%d rows)\n", s, ll[s], lh[s], l[s] }
