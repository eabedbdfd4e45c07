<?php

declare(strict_types=1);

// A classic script that ends the process it runs in (the sequential tier's worker), as old code does.
echo 'bye';
exit;
