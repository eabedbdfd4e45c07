#!/bin/sh
echo "Content-Type: text/plain"
echo
echo "should never run"
