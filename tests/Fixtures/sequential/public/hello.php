<?php

declare(strict_types=1);

// The hello-world page of the benchmarks and of bench/micro/instructions.php (GET /hello).
echo 'Hello, World!';
