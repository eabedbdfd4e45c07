<?php

declare(strict_types=1);
usleep((int) ($_GET['ms'] ?? 0) * 1000);
echo 'slept';
