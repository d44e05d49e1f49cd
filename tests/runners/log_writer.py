"""A separate training program for the monitor test: appends rows of a staircase loss to a CSV log.

    python log_writer.py LOG TIMES_JSON ROWS_PER_UPDATE INTERVAL

Every ``INTERVAL`` seconds it appends ``ROWS_PER_UPDATE`` rows, in two writes: all but half of the last
row, then (50 ms later) the rest, so that a reader often finds a row cut in the middle.  After each
write it records (wall-clock time, complete rows in the file); at the end it writes those to TIMES_JSON.
"""

import json
import math
import sys
import time


def loss(t: float) -> float:
    # three plateau-then-drop transitions at steps 100, 300 and 800 (logistic in log-step, like a staircase)
    value = 1e-3
    for centre, height in ((100.0, 4.0), (300.0, 1.0), (800.0, 0.25)):
        value += height / (1.0 + math.exp(12.0 * (math.log(max(t, 1.0)) - math.log(centre))))
    return value


def main():
    path, times_path, per, interval = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    steps = 1201
    rows = [f"{t},{loss(t)!r}\n" for t in range(steps)]
    stamps = []
    with open(path, "w") as fh:
        fh.write("step,loss\n")
        fh.flush()
        done = 0
        while done < steps:
            chunk = rows[done:done + per]
            text = "".join(chunk)
            cut = len(text) - len(chunk[-1]) // 2
            fh.write(text[:cut])
            fh.flush()
            stamps.append((time.time(), done + len(chunk) - 1))
            time.sleep(0.05)
            fh.write(text[cut:])
            fh.flush()
            done += len(chunk)
            stamps.append((time.time(), done))
            time.sleep(interval - 0.05)
    with open(times_path, "w") as fh:
        json.dump(stamps, fh)


if __name__ == "__main__":
    main()
