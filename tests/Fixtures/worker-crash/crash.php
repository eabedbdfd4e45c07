<?php

declare(strict_types=1);

// What an engine fault (a crash inside PHP or an extension) does to the process running the script.
posix_kill(getmypid(), SIGSEGV);
sleep(5);
echo 'not reached';
