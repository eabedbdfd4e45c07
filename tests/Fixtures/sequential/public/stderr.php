<?php

declare(strict_types=1);

// What a script says on its standard error, each way PHP offers: the tests find each line in the error log.
$mark = (string) ($_GET['mark'] ?? '');
echo $undefinedOnPurpose ?? '';
trigger_error("a warning $mark", E_USER_WARNING);
trigger_error("a deprecation $mark", E_USER_DEPRECATED);
error_log("error_log $mark");
fwrite(STDERR, "written to STDERR $mark\n");
echo "said $mark";
