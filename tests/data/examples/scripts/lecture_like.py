"""A lecture-style script: no function to click, work at module level and under __main__.

Each run appends a line to ``runs.txt`` beside the file (cwd is the file's folder, as with
``python FILE``), so a test can tell how many times it ran.
"""

import torch


def square_3(a):
    return a * a * a


with open("runs.txt", "a") as fh:
    fh.write("ran\n")

b = torch.randn(128, 128)
c = torch.square(b)
for _ in range(3):
    d = square_3(c)

if __name__ == "__main__":
    e = torch.relu(d).sum()
    print("sum", float(e))
