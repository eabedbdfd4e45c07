<?php

declare(strict_types=1);
echo 'front controller: ', $_SERVER['REQUEST_URI'];
