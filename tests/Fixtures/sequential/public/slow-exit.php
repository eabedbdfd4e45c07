<?php

declare(strict_types=1);
usleep(400_000);
exit('exited after 0.4 s');
