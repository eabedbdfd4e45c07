#!/bin/sh
# A streamed response: three lines, a short pause between them.
printf 'Content-Type: text/plain\n\n'
for i in 1 2 3; do
    echo "line $i"
    sleep 0.2
done
