#!/usr/bin/env python3
# Never answers. Writes its own pid and the pid of a child it started to the file named by the query
# string, so a test can check that a timeout killed both.
import os, subprocess, sys, time

child = subprocess.Popen(["sleep", "300"])
path = os.environ.get("QUERY_STRING", "")
if path.startswith("/tmp/"):
    with open(path + ".tmp", "w") as f:
        f.write("%d %d" % (os.getpid(), child.pid))
    os.rename(path + ".tmp", path)
while True:
    time.sleep(1)
