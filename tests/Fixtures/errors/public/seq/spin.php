<?php

declare(strict_types=1);
while (true) {
    // only the time limit stops it
}
