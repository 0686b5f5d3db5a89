#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Copies of an ELF file that differ only in their build-id: the first four
bytes of its GNU build-id note replaced by the copy's number, so that each
is a file of its own to the agent's caches, as the binaries of a deploy or
of many containers are.  A file without a build-id is copied as it is.

usage: buildid-copies.py FILE COUNT OUT-PREFIX
       (writes OUT-PREFIX000, OUT-PREFIX001, ..., mode 0755)
"""
import os
import struct
import subprocess
import sys

src, count, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
notes = subprocess.run(["readelf", "-n", src], capture_output=True, text=True,
                       check=True).stdout
ids = [line.split()[-1] for line in notes.splitlines() if "Build ID:" in line]
image = bytearray(open(src, "rb").read())
at = image.find(bytes.fromhex(ids[0])) if ids else -1
if ids and at < 0:
    sys.exit("buildid-copies: the build-id of %s is not in its bytes" % src)
for i in range(count):
    if at >= 0:
        image[at:at + 4] = struct.pack("<I", i)
    path = "%s%03d" % (prefix, i)
    with open(path, "wb") as f:
        f.write(image)
    os.chmod(path, 0o755)
