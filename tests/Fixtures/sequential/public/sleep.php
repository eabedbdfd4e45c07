<?php

declare(strict_types=1);
echo 'sleeping';
sleep(10);
echo 'woke up';
