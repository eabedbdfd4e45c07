<?php

declare(strict_types=1);

// A command-line script with the usual guard (Cacti's poller.php has this one). Past the guard it leaves a mark
// in the file named by KILN_TEST_CLI_MARK: over HTTP it must never get there.
if (php_sapi_name() != 'cli') {
    die('<br><strong>This script is only meant to run at the command line.</strong>');
}
file_put_contents((string) getenv('KILN_TEST_CLI_MARK'), 'ran');
echo 'polled';
