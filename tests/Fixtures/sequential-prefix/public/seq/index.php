<?php

declare(strict_types=1);
header('X-Tier: sequential');
echo 'sequential';
