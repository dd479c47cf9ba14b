# Row 91 (gsl): the global scales, loaded after the group data, are stored (and any groups past
# the block's threads loaded) just before StageInputs' last barrier instead of before the inputs'
# wait, so no warp waits for their load ahead of the staging's barriers.
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
old = """  if (loads_scales) {
    bg.global_a[scale_group] = global_a;
    bg.global_b[scale_group] = global_b;
  }
  for (int local = scale_group + blockDim.x;
       local < p.groups_per_block && bt.first_group + local < groups; local += blockDim.x) {
    const int expert = bg.expert[local];
    bg.global_a[local] = p.global_a[expert];
    if (p.global_b != nullptr) bg.global_b[local] = p.global_b[expert];
  }
"""
assert s.count(old) == 1
s = s.replace(old, "")
old2 = """    for (int r = walk.first_row; r < rows; r += walk.row_step) convert_row(r, row_max[r]);
  }
  __syncthreads();
}
"""
assert s.count(old2) == 1
s = s.replace(old2, """    for (int r = walk.first_row; r < rows; r += walk.row_step) convert_row(r, row_max[r]);
  }
""" + old + """  __syncthreads();
}
""")
open(dst, 'w').write(s)
