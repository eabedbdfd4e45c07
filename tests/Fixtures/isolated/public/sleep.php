<?php

declare(strict_types=1);

usleep((int) ($_GET['ms'] ?? 1000) * 1000);
echo 'slept ', getmypid();
