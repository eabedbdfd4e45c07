<?php

declare(strict_types=1);

// A command-line script that tells a shell from a web server by getopt(), which gives false without a command
// line (as tt-rss's update.php and update_daemon2.php do). Over HTTP it must stop at its first line.
$options = getopt('', ['feeds', 'daemon']);
if (!is_array($options)) {
    die("refused: no command line\n");
}
$mark = getenv('KILN_TEST_CLI_MARK');
if (is_string($mark) && $mark !== '') {
    touch("$mark.daemon");
}
echo "ran as a command-line script\n";
