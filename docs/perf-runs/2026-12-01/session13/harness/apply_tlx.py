# Row 115: row 110's `tlend` timeline (apply_tlend.py: event 1 is the warp's end, event 5 its
# loop's end) with event 4 replaced, in the cluster K halves' kernels, by the exchange: on rank 0
# when the warp's wait for K half 1's bytes ends, on rank 1 when the warp has sent them. So for
# each warp of the union-10 gate+up: loop end, exchange, end. Applies to the committed kernels and
# to apply_warm.py's (row 116).
import os
import subprocess
import sys

from source_edit import Source

here = os.path.dirname(os.path.abspath(__file__))
src, dst = sys.argv[1], sys.argv[2]
subprocess.run([sys.executable, here + "/../../session12/harness/apply_tlend.py", src, dst],
               check=True)
source = Source(dst)
rep = source.replace
record = """
      if (lane == 0 && g_sel_timeline != nullptr) {  // TLX: event 4, the exchange
        uint32_t* r = g_sel_timeline + (int64_t{blockIdx.x} * 32 + warp) * 8;
        r[4] = (r[4] & 0xFFFFu) | (units() << 16);
      }"""
rep("""        SendToRankZero(partials + warp * kPartialFloatsPerWarp + 4 * lane, acc, exchange);
""", """        SendToRankZero(partials + warp * kPartialFloatsPerWarp + 4 * lane, acc, exchange);""" + record + "\n")
# apply_warm.py's form (row 116):
if "        if (round == 1) WaitExchange(exchange);\n" in source.text:
    rep("""        if (round == 1) WaitExchange(exchange);
""", """        if (round == 1) {
          WaitExchange(exchange);""" + record.replace("\n", "\n  ") + """
        }
""")
else:
    rep("""      WaitExchange(exchange);
""", """      WaitExchange(exchange);""" + record + "\n")
source.write(dst)
