<?php

declare(strict_types=1);
header('Status: 404 Not Found');
echo 'not here';
