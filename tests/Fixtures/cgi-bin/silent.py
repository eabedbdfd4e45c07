#!/usr/bin/env python3
# Exits without writing anything, complaining on stderr.
import sys
sys.stderr.write("silent.py: nothing to say\n")
sys.exit(3)
