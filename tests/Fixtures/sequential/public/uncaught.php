<?php

declare(strict_types=1);
echo 'before the exception;';
throw new RuntimeException('nobody caught this');
