<?php

declare(strict_types=1);
echo 'spinning';
while (true) {
    // a busy loop: only the time limit stops it
}
