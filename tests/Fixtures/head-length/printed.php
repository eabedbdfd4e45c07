<?php

declare(strict_types=1);

// A script that prints its page whatever the method, and sets no length.
echo 'printed for GET and HEAD alike';
