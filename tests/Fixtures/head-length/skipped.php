<?php

declare(strict_types=1);

// A script that prints nothing for HEAD and sets no length: its GET has a body all the same.
if ($_SERVER['REQUEST_METHOD'] !== 'HEAD') {
    echo 'only for GET';
}
